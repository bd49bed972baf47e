import pytest

from tollbooth.trips import normalise_plate


def test_lower_case_with_spaces():
    assert normalise_plate(" ab12 cde ") == "AB12CDE"


def test_hyphens():
    assert normalise_plate("vn65-xyz") == "VN65XYZ"


def test_tidy_plate_is_unchanged():
    assert normalise_plate("AB12CDE") == "AB12CDE"


def test_rejects_other_characters_and_empty_plates():
    with pytest.raises(ValueError):
        normalise_plate("AB12 CD!")
    with pytest.raises(ValueError):
        normalise_plate("  - ")

import pytest

from sawmill.timber import known_species, parse_section, piece_price, piece_volume


def test_parse_section():
    assert parse_section("47x100") == (47, 100)
    assert parse_section(" 25 X 150 ") == (25, 150)


def test_parse_section_rejects_other_text():
    for text in ["47", "47x", "x100", "47 by 100", "0x100", ""]:
        with pytest.raises(ValueError):
            parse_section(text)


def test_piece_volume():
    assert piece_volume(47, 100, 2400) == 11_280_000
    assert piece_volume(100, 100, 1000) == 10_000_000


def test_piece_price_is_rounded_up_to_a_penny():
    assert piece_price("pine", 47, 100, 2400) == 508
    assert piece_price("oak", 25, 150, 900) == 608


def test_piece_price_of_a_tenth_of_a_cubic_metre():
    assert piece_price("spruce", 100, 200, 5000) == 4000


def test_known_species():
    assert known_species() == ["larch", "oak", "pine", "spruce"]

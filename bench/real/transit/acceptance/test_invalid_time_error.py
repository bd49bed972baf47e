import pytest

from transit.times import InvalidTimeError, to_minutes


def test_is_a_value_error():
    assert issubclass(InvalidTimeError, ValueError)


@pytest.mark.parametrize("text", ["24:00", "07:75"])
def test_out_of_range_values_raise(text):
    with pytest.raises(InvalidTimeError):
        to_minutes(text)


@pytest.mark.parametrize("text", ["0800", "ab:cd"])
def test_malformed_text_raises(text):
    with pytest.raises(InvalidTimeError):
        to_minutes(text)


def test_valid_time_still_works():
    assert to_minutes("07:05") == 425

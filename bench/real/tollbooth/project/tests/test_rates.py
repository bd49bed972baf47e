import pytest

from tollbooth.rates import format_pence, is_peak, parse_time, toll


def test_parse_time():
    assert parse_time("07:05") == 425
    assert parse_time(" 7:05 ") == 425
    assert parse_time("00:00") == 0
    assert parse_time("23:59") == 1439


def test_parse_time_rejects_other_text():
    for text in ["24:00", "12:60", "noon", "", "1230"]:
        with pytest.raises(ValueError):
            parse_time(text)


def test_peaks():
    assert is_peak(parse_time("07:00"))
    assert is_peak(parse_time("09:59"))
    assert not is_peak(parse_time("10:00"))
    assert is_peak(parse_time("17:30"))
    assert not is_peak(parse_time("06:59"))


def test_toll_outside_the_peaks():
    assert toll("car", parse_time("12:00")) == 300
    assert toll("lorry", parse_time("22:15")) == 1000


def test_toll_in_a_peak():
    assert toll("car", parse_time("08:00")) == 450
    assert toll("motorcycle", parse_time("16:00")) == 225


def test_format_pence():
    assert format_pence(450) == "£4.50"
    assert format_pence(1205) == "£12.05"
    assert format_pence(0) == "£0.00"

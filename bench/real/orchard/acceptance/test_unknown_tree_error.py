import pytest

from orchard.harvest import HarvestLog, UnknownTreeError


def make_log() -> HarvestLog:
    log = HarvestLog("Hillside")
    log.plant("R1-T1", "Gala")
    return log


def test_is_a_key_error():
    assert issubclass(UnknownTreeError, KeyError)


def test_record_for_unknown_tree_raises():
    with pytest.raises(UnknownTreeError):
        make_log().record("R9-T9", 500)


def test_total_for_unknown_tree_raises():
    with pytest.raises(UnknownTreeError):
        make_log().total("R9-T9")


def test_message_names_the_tree():
    with pytest.raises(UnknownTreeError) as info:
        make_log().record("R9-T9", 500)
    assert "R9-T9" in str(info.value)


def test_planted_tree_without_picks_totals_zero():
    assert make_log().total("R1-T1") == 0

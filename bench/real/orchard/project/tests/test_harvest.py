import pytest

from orchard.harvest import HarvestLog


def make_log() -> HarvestLog:
    log = HarvestLog("Hillside")
    log.plant("R1-T1", "Gala")
    log.plant("R1-T2", "Fuji")
    log.record("R1-T1", 2500)
    log.record("R1-T1", "1.5kg")
    log.record("R1-T2", 800)
    return log


def test_totals_per_tree():
    log = make_log()
    assert log.total("R1-T1") == 4000
    assert log.total("R1-T2") == 800


def test_picks_in_recorded_order():
    assert make_log().picks("R1-T1") == [2500, 1500]


def test_trees_and_varieties():
    log = make_log()
    assert log.trees() == ["R1-T1", "R1-T2"]
    assert log.variety("R1-T2") == "Fuji"
    assert log.name == "Hillside"


def test_len_counts_all_picks():
    assert len(make_log()) == 3


def test_cannot_plant_a_tree_twice():
    log = make_log()
    with pytest.raises(ValueError):
        log.plant("R1-T1", "Fuji")


def test_empty_pick_is_rejected():
    with pytest.raises(ValueError):
        make_log().record("R1-T1", 0)

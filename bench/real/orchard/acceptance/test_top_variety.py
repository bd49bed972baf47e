from orchard.harvest import HarvestLog


def make_log() -> HarvestLog:
    log = HarvestLog("Hillside")
    log.plant("R1-T1", "Gala")
    log.plant("R1-T2", "Gala")
    log.plant("R2-T1", "Fuji")
    return log


def test_variety_with_largest_total():
    log = make_log()
    log.record("R1-T1", 2000)
    log.record("R1-T2", 1500)
    log.record("R2-T1", 900)
    assert log.top_variety() == "Gala"


def test_none_when_nothing_picked():
    assert make_log().top_variety() is None


def test_none_for_empty_log():
    assert HarvestLog("Empty").top_variety() is None


def test_tie_goes_to_first_planted_variety():
    log = HarvestLog("Hillside")
    log.plant("R1-T1", "Gala")
    log.plant("R2-T1", "Braeburn")
    log.record("R1-T1", 1000)
    log.record("R2-T1", 1000)
    assert log.top_variety() == "Gala"

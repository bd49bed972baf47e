from orchard.harvest import HarvestLog


def make_log() -> HarvestLog:
    log = HarvestLog("Hillside")
    log.plant("R1-T1", "Gala")
    log.plant("R1-T2", "Gala")
    log.plant("R2-T1", "Fuji")
    log.record("R1-T1", 2000)
    log.record("R1-T2", 1500)
    log.record("R2-T1", 900)
    return log


def test_totals_per_variety():
    assert make_log().totals_by_variety() == {"Gala": 3500, "Fuji": 900}


def test_unpicked_variety_has_zero():
    log = make_log()
    log.plant("R3-T1", "Braeburn")
    assert log.totals_by_variety() == {"Gala": 3500, "Fuji": 900, "Braeburn": 0}


def test_empty_log():
    assert HarvestLog("Empty").totals_by_variety() == {}

from foundry.jobs import Job


def make_job():
    job = Job("Marsh Pumps")
    job.add("bracket", "aluminium", 1000, quantity=4)
    job.add("bush", "bronze", 250, quantity=2)
    job.add("lid", "aluminium", 400)
    return job


def test_weight_of_each_alloy():
    assert make_job().weight_by_alloy() == {"aluminium": 11880, "bronze": 4400}


def test_keyed_by_the_stored_name():
    job = Job("Marsh Pumps")
    job.add("bush", "Bronze", 250)
    assert job.weight_by_alloy() == {"bronze": 2200}


def test_empty_job():
    assert Job("Marsh Pumps").weight_by_alloy() == {}


def test_adds_up_to_the_metal_weight():
    job = make_job()
    job.add("bed plate", "iron", 3000, quantity=3)
    assert sum(job.weight_by_alloy().values()) == job.metal_weight()

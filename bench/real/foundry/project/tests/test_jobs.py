import pytest

from foundry.jobs import Casting, Job


def make_job():
    job = Job("Marsh Pumps")
    job.add("impeller", "bronze", 500, quantity=3)
    job.add("cover", "aluminium", 1000)
    return job


def test_add_weighs_the_line():
    job = Job("Marsh Pumps")
    casting = job.add("impeller", "Bronze", 500, quantity=3)
    assert casting == Casting("impeller", "bronze", 500, 3, 4400)
    assert job.castings() == [casting]


def test_quantity_and_volume_must_be_at_least_one():
    job = Job("Marsh Pumps")
    with pytest.raises(ValueError):
        job.add("impeller", "bronze", 500, quantity=0)
    with pytest.raises(ValueError):
        job.add("impeller", "bronze", 0)
    assert job.castings() == []


def test_castings_in_one_alloy():
    job = make_job()
    assert [casting.part for casting in job.castings("aluminium")] == ["cover"]


def test_pieces_weight_and_cost():
    job = make_job()
    assert job.pieces() == 4
    assert job.metal_weight() == 3 * 4400 + 2700
    assert job.metal_cost() == 15840 + 945

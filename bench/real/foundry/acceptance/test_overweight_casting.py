import pytest

from foundry.jobs import Job, OverweightError


def test_is_a_value_error():
    assert issubclass(OverweightError, ValueError)


def test_a_casting_too_heavy_to_pour():
    job = Job("Marsh Pumps")
    job.add("cover", "aluminium", 1000)
    before = job.castings()
    with pytest.raises(OverweightError) as caught:
        job.add("bed plate", "iron", 80000)
    assert "576000" in str(caught.value)
    assert job.castings() == before


def test_exactly_the_limit_is_allowed():
    job = Job("Marsh Pumps")
    casting = job.add("bed plate", "iron", 75000)
    assert casting.weight == 540000
    assert job.castings() == [casting]


def test_the_limit_is_per_casting():
    job = Job("Marsh Pumps")
    casting = job.add("bracket", "aluminium", 2000, quantity=500)
    assert casting.weight == 5400
    assert job.castings() == [casting]

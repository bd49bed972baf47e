from foundry.invoice import invoice_total
from foundry.jobs import Job


def job_of(*lines):
    job = Job("Marsh Pumps")
    for quantity, alloy, volume in lines:
        job.add("part", alloy, volume, quantity=quantity)
    return job


def test_metal_and_moulding():
    assert invoice_total(job_of((10, "aluminium", 1000))) == 13450


def test_just_over_the_minimum():
    assert invoice_total(job_of((2, "bronze", 250))) == 6080


def test_small_job_pays_the_minimum():
    assert invoice_total(job_of((4, "aluminium", 1000))) == 6000


def test_several_lines():
    assert invoice_total(job_of((1, "iron", 75000), (3, "brass", 100))) == 84895


def test_empty_job_costs_nothing():
    assert invoice_total(Job("Marsh Pumps")) == 0

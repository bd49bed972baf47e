from orchard.units import crates_needed


def test_exactly_full_crates():
    assert crates_needed(36000) == 2


def test_no_fruit_needs_no_crates():
    assert crates_needed(0) == 0


def test_partial_crate_counts():
    assert crates_needed(18001) == 2


def test_custom_crate_capacity():
    assert crates_needed(10, crate_capacity=5) == 2

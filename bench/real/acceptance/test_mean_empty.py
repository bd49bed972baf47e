from stats import mean


def test_empty_list_is_zero():
    assert mean([]) == 0.0


def test_non_empty_unchanged():
    assert mean([1, 2, 3]) == 2
    assert mean([2.5]) == 2.5

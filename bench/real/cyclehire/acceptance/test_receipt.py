from cyclehire.receipt import receipt_line


def test_whole_hours():
    assert receipt_line("B1", 120, 450) == "B1: 2h £9.00"


def test_under_an_hour():
    assert receipt_line("B7", 45, 300) == "B7: 45m £3.00"


def test_one_hour():
    assert receipt_line("B2", 60, 500) == "B2: 1h £5.00"

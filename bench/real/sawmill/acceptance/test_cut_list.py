from sawmill.orders import Order


def make_order():
    order = Order("Hill & Sons")
    order.add("pine", "47x100", 2400, quantity=2)
    order.add("oak", "25x150", 900)
    order.add("spruce", "47x75", 3000)
    return order


def test_every_piece_longest_first():
    assert make_order().cut_list() == [3000, 2400, 2400, 900]


def test_empty_order():
    assert Order("Hill & Sons").cut_list() == []


def test_one_entry_per_piece():
    order = make_order()
    order.add("larch", "22x100", 1800, quantity=5)
    assert len(order.cut_list()) == order.pieces()


def test_leaves_the_lines_alone():
    order = make_order()
    before = order.lines()
    order.cut_list()
    assert order.lines() == before

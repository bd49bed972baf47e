from lending.catalog import Catalog


def make_catalog():
    catalog = Catalog()
    catalog.add_book("0306406152", "Signals and Systems")
    catalog.add_book("0131103628", "The C Programming Language")
    return catalog


def test_lists_the_borrowed_isbns_sorted():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    catalog.lend("0131103628", "ann")
    assert catalog.on_loan_to("ann") == ["0131103628", "0306406152"]


def test_a_returned_book_is_no_longer_listed():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    catalog.lend("0131103628", "ann")
    catalog.give_back("0306406152", "ann")
    assert catalog.on_loan_to("ann") == ["0131103628"]


def test_a_member_with_nothing_out_gets_an_empty_list():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    assert catalog.on_loan_to("bob") == []

from gradebook.book import GradeBook


def make_book() -> GradeBook:
    book = GradeBook("Biology 101")
    book.add_score("Ana", 90)
    book.add_score("Ana", 80)
    book.add_score("Ben", 70)
    book.add_score("Ben", 95)
    return book


def test_highest_average_wins():
    assert make_book().top_student() == "Ana"


def test_later_student_can_lead():
    book = make_book()
    book.add_score("Cal", 99)
    assert book.top_student() == "Cal"


def test_tie_goes_to_student_added_first():
    book = GradeBook("Biology 101")
    book.add_score("Ana", 80)
    book.add_score("Ben", 80)
    assert book.top_student() == "Ana"


def test_none_for_empty_book():
    assert GradeBook("Biology 101").top_student() is None

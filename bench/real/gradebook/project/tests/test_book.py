from gradebook.book import GradeBook


def make_book() -> GradeBook:
    book = GradeBook("Biology 101")
    book.add_score("Ana", 85)
    book.add_score("Ben", 72)
    book.add_score("Ana", 95)
    return book


def test_scores_in_order_added():
    assert make_book().scores("Ana") == [85, 95]


def test_unknown_student_has_no_scores():
    book = make_book()
    assert book.scores("Zoe") == []
    assert book.average("Zoe") == 0.0


def test_students_in_insertion_order():
    assert make_book().students() == ["Ana", "Ben"]


def test_average_per_student():
    book = make_book()
    assert book.average("Ana") == 90.0
    assert book.average("Ben") == 72.0


def test_len_counts_all_scores():
    book = make_book()
    assert len(book) == 3
    assert book.course == "Biology 101"

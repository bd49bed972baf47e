from gradebook.book import GradeBook


def test_median_across_students_odd_count():
    book = GradeBook("Biology 101")
    book.add_score("Ana", 70)
    book.add_score("Ana", 90)
    book.add_score("Ben", 80)
    assert book.class_median() == 80


def test_median_across_students_even_count():
    book = GradeBook("Biology 101")
    book.add_score("Ana", 70)
    book.add_score("Ana", 90)
    book.add_score("Ben", 80)
    book.add_score("Ben", 100)
    assert book.class_median() == 85.0


def test_none_when_no_scores():
    assert GradeBook("Biology 101").class_median() is None

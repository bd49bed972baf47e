"""A minimal in-memory grade book of scores per student."""

from __future__ import annotations

from gradebook.scores import average as mean


class GradeBook:
    """Percentage scores for one course, grouped by student name.

    Scores are kept in the order they were added; students are listed in
    the order they first received a score.
    """

    def __init__(self, course: str) -> None:
        self.course = course
        self._scores: dict[str, list[float]] = {}

    def add_score(self, student: str, score: float) -> None:
        """Record ``score`` (a percentage from 0 to 100) for ``student``."""
        self._scores.setdefault(student, []).append(score)

    def scores(self, student: str) -> list[float]:
        """Return the scores of ``student`` in the order they were added.

        A student the book does not know about has no scores, so an empty
        list is returned rather than raising.
        """
        return list(self._scores.get(student, []))

    def students(self) -> list[str]:
        """Return the student names in the order they were first added."""
        return list(self._scores)

    def average(self, student: str) -> float:
        """Return the mean score of ``student`` (``0.0`` when they have none)."""
        return mean(self._scores.get(student, []))

    def __len__(self) -> int:
        """Total number of scores across all students."""
        return sum(len(values) for values in self._scores.values())

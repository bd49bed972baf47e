"""A minimal in-memory timetable of departures per stop."""

from __future__ import annotations

from transit.times import to_minutes


class Timetable:
    """Departure times for one route, grouped by stop name.

    Times are kept as the ``"HH:MM"`` strings they were added with and are
    always returned in chronological order.
    """

    def __init__(self, route: str) -> None:
        self.route = route
        self._departures: dict[str, list[str]] = {}

    def add_departure(self, stop: str, time: str) -> None:
        """Record a departure from ``stop`` at ``time`` (``"HH:MM"``)."""
        times = self._departures.setdefault(stop, [])
        times.append(time)
        times.sort(key=to_minutes)

    def departures(self, stop: str) -> list[str]:
        """Return the departures from ``stop`` in time order.

        A stop the timetable does not know about has no departures, so an
        empty list is returned rather than raising.
        """
        return list(self._departures.get(stop, []))

    def stops(self) -> list[str]:
        """Return the stop names in the order they were first added."""
        return list(self._departures)

    def __len__(self) -> int:
        """Total number of departures across all stops."""
        return sum(len(times) for times in self._departures.values())

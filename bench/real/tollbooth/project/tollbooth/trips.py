"""Customer accounts: the vehicles on an account and the trips they made.

A trip is one pass through the toll on a day written ``"YYYY-MM-DD"`` at a
time written ``"HH:MM"``; it is charged when it is recorded.
"""

from dataclasses import dataclass

from .rates import parse_time, toll


@dataclass(frozen=True)
class Trip:
    """One pass through the toll and what it was charged, in pence."""

    plate: str
    day: str
    time: str
    charge: int


class Account:
    """One customer's account: their vehicles and their trips."""

    def __init__(self, holder):
        """An empty account in the name of ``holder``."""
        self.holder = holder
        self._vehicles = {}
        self._trips = []

    def register(self, plate, vehicle_class):
        """Adds the vehicle ``plate`` of ``vehicle_class`` to the account.

        Raises ``ValueError`` if the plate is already on the account.
        """
        if plate in self._vehicles:
            raise ValueError(f"vehicle {plate} is already registered")
        self._vehicles[plate] = vehicle_class

    def vehicle_class(self, plate):
        """The vehicle class of the registered vehicle ``plate``."""
        return self._vehicles[plate]

    def record_trip(self, plate, day, time):
        """Charges and records a trip of the vehicle ``plate``; returns the ``Trip``."""
        charge = toll(self._vehicles[plate], parse_time(time))
        trip = Trip(plate, day, time, charge)
        self._trips.append(trip)
        return trip

    def trips(self, plate=None):
        """The trips in the order they were recorded; only of ``plate`` if given."""
        return [trip for trip in self._trips if plate is None or trip.plate == plate]

    def total(self):
        """The sum in pence of the charges of all the account's trips."""
        return sum(trip.charge for trip in self._trips)

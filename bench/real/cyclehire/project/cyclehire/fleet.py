"""The bikes of one hire shop and who has each of them out.

Each bike has an id (such as ``"B1"``) and a kind (such as ``"road"`` or
``"city"``). A bike is either in the shop or rented to one customer.
"""


class Fleet:
    """The bikes of one shop and their current rentals."""

    def __init__(self, shop):
        """An empty fleet for the shop called ``shop``."""
        self.shop = shop
        self._kinds = {}
        self._rentals = {}

    def add_bike(self, bike_id, kind):
        """Adds a bike of the given kind; each id may be added only once."""
        if bike_id in self._kinds:
            raise ValueError(f"bike {bike_id} is already in the fleet")
        self._kinds[bike_id] = kind

    def kind(self, bike_id):
        """The kind of the bike ``bike_id``."""
        return self._kinds[bike_id]

    def rent(self, bike_id, customer):
        """Records that ``customer`` has taken the bike ``bike_id`` out.

        Raises ``ValueError`` if the bike is already rented.
        """
        if bike_id in self._rentals:
            raise ValueError(f"bike {bike_id} is already rented")
        self._rentals[bike_id] = customer

    def return_bike(self, bike_id):
        """Records that the bike ``bike_id`` is back; returns who had it."""
        return self._rentals.pop(bike_id)

    def is_rented(self, bike_id):
        """Whether the bike ``bike_id`` is out with a customer."""
        return bike_id in self._rentals

    def available(self, kind=None):
        """The ids of the bikes in the shop, sorted; only of ``kind`` if given."""
        if kind is not None:
            return sorted(b for b, k in self._kinds.items() if k == kind)
        return sorted(b for b in self._kinds if b not in self._rentals)

"""An in-memory record of what each tree in an orchard has yielded."""

from __future__ import annotations

from typing import Union

from orchard.units import parse_weight


class HarvestLog:
    """Trees planted in one orchard and every pick taken from them.

    Each tree is known by an id such as ``"R1-T4"`` (row 1, tree 4) and has
    one variety. Picks are stored in whole grams in the order recorded.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._varieties: dict[str, str] = {}
        self._picks: dict[str, list[int]] = {}

    def plant(self, tree: str, variety: str) -> None:
        """Register ``tree`` as a tree of ``variety``."""
        if tree in self._varieties:
            raise ValueError(f"tree {tree!r} is already planted")
        self._varieties[tree] = variety
        self._picks[tree] = []

    def record(self, tree: str, weight: Union[int, str]) -> None:
        """Record a pick of ``weight`` from ``tree``.

        ``weight`` is either whole grams or text such as ``"1.5kg"``.
        """
        grams = parse_weight(weight) if isinstance(weight, str) else weight
        if grams <= 0:
            raise ValueError("a pick must weigh more than nothing")
        self._picks[tree].append(grams)

    def variety(self, tree: str) -> str:
        """Return the variety ``tree`` was planted as."""
        return self._varieties[tree]

    def picks(self, tree: str) -> list[int]:
        """Return the weights picked from ``tree``, oldest first."""
        return list(self._picks.get(tree, []))

    def total(self, tree: str) -> int:
        """Return the total grams picked from ``tree`` so far."""
        return sum(self._picks.get(tree, []))

    def trees(self) -> list[str]:
        """Return the tree ids in the order they were planted."""
        return list(self._varieties)

    def __len__(self) -> int:
        """Number of picks recorded across all trees."""
        return sum(len(picks) for picks in self._picks.values())

"""Taking orders for sawn timber at a small timber yard."""

__version__ = "0.1.0"

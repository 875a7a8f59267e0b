"""``pyflame`` -> ``wse``, split along its seams (the driver is ``lowering/to_wse.py``)."""

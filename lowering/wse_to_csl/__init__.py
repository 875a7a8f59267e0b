"""``wse`` -> ``csl``, split along its seams (the driver is ``lowering/to_csl.py``)."""

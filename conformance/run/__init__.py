"""Driving cases: the suite runner, generated cases one at a time, properties, the kill table."""

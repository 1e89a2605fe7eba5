"""The package list, which pyproject.toml cannot state: every package found in conformance/
and fakeprovider/, plus conformance.fixtures, the top-level fixtures/ folder that
pyproject.toml's package-dir maps into the wheel (a find in pyproject.toml sees only folders
under their package's own path)."""

from setuptools import find_namespace_packages, setup

PACKAGES = find_namespace_packages(include=["conformance*", "fakeprovider*"])
setup(packages=[*PACKAGES, "conformance.fixtures"])

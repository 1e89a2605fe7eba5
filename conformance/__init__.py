"""Conformance suite for LLM streaming adapters."""

"""golden: build golden evaluation datasets for RAG systems and score RAG runs against them."""

__version__ = "0.1.0"

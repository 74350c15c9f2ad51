"""Model catalogue of Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud
Networks", IEEE JSAC 2022 (Table II): model, dataset, data chunks D_j and mini-batches per chunk B_j."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TABLE_II_MODELS", "ModelSpec", "find_model", "normalise_model_name"]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One DL model of the catalogue.

    Attributes:
        name: model name as printed in the paper (e.g. ``"ResNet-50"``).
        dataset: training dataset.
        num_chunks: D_j, data chunks of a job training this model.
        batches_per_chunk: B_j, mini-batches in one chunk.
    """

    name: str
    dataset: str
    num_chunks: int
    batches_per_chunk: int

    def __post_init__(self) -> None:
        if self.num_chunks < 1 or self.batches_per_chunk < 1:
            raise ValueError(f"ModelSpec {self.name!r}: num_chunks and batches_per_chunk must be >= 1")


#: Wang et al. (JSAC 2022), Table II (§V-A). The index in this tuple is ``JobSet.model``.
TABLE_II_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("ResNet-50", "CIFAR10", 27, 58),
    ModelSpec("ResNet-101", "CIFAR10", 27, 58),
    ModelSpec("GoogLeNet", "Caltech101", 115, 58),
    ModelSpec("LeNet", "Caltech101", 115, 58),
    ModelSpec("AlexNet", "ImageNet-12", 60, 58),
    ModelSpec("Inception-BN", "ImageNet-12", 60, 58),
)


def normalise_model_name(name: str) -> str:
    """Case-folded name without spaces, dashes, underscores or dots (``"ResNet-50"`` -> ``"resnet50"``)."""
    return re.sub(r"[\s\-_.]", "", str(name)).casefold()


def find_model(name: str, models: tuple[ModelSpec, ...] = TABLE_II_MODELS) -> int | None:
    """Index of the model called ``name`` in ``models`` (case-insensitive, ignoring ``-``/``_``/spaces).

    Returns ``None`` when no model matches, e.g. ITP's ``"resnet50"`` matches ``"ResNet-50"`` but
    ``"bert"`` matches nothing.
    """
    key = normalise_model_name(name)
    for i, model in enumerate(models):
        if normalise_model_name(model.name) == key:
            return i
    return None

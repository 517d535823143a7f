"""What counting every registered model gives, kept as tables: counting costs seconds of building and
tracing in a fresh process (the Calibrate page's first run, every calibration prior's), the tables
nothing.  ``tests/core/models`` recounts every entry from the models (``core.models.build.count_flops_per_sample``,
``core.models.build.count_architecture``), so a table cannot drift from the definitions it describes."""

from __future__ import annotations

#: forward FLOPs of one sample of every registered model, as :func:`count_flops_per_sample` counts them
#: (torch 2.13)
FLOPS_PER_SAMPLE: dict[str, int] = {
    "resnet20": 81102080, "resnet32": 137725184, "resnet44": 194348288, "resnet56": 250971392,
    "resnet18": 3628146688, "resnet50": 8178368512, "resnet18_cifar": 1110845440, "resnet50_cifar": 2595659776,
    "vgg16": 30940528640, "inception_v3": 11426432192, "resnet8_1d": 742400, "resnet14_1d": 1602560,
    "resnet20_1d": 2462720, "resnet32_1d": 4183040, "resnet44_1d": 5903360, "resnet56_1d": 7623680,
}


#: ``(parameters, block type, first-stage width)`` of every registered model, as
#: :func:`core.models.build.count_architecture` finds them by building the model
ARCHITECTURE_SHAPES: dict[str, tuple[int, str, int]] = {
    "resnet20": (269722, "basic", 16), "resnet32": (464154, "basic", 16), "resnet44": (658586, "basic", 16),
    "resnet56": (853018, "basic", 16), "resnet18": (11689512, "basic", 64),
    "resnet50": (25557032, "bottleneck", 64), "resnet18_cifar": (11173962, "basic", 64),
    "resnet50_cifar": (23520842, "bottleneck", 64), "vgg16": (138357544, "plain", 64),
    "inception_v3": (23834568, "inception", 32), "resnet8_1d": (28506, "basic", 16),
    "resnet14_1d": (61210, "basic", 16), "resnet20_1d": (93914, "basic", 16),
    "resnet32_1d": (159322, "basic", 16), "resnet44_1d": (224730, "basic", 16),
    "resnet56_1d": (290138, "basic", 16),
}

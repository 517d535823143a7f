"""Defaults and units shared by several areas, named once (no bare ``0.92`` or ``3600`` elsewhere)."""

#: the target accuracy the course plans for
DEFAULT_TARGET_ACC = 0.92
#: nominal coverage of every interval the planner shows
DEFAULT_LEVEL = 0.8
SECONDS_PER_HOUR = 3600.0
#: the course's calibration runs: CIFAR-10 at batch 128, 391 steps an epoch
COURSE_BATCH = 128
COURSE_STEPS_PER_EPOCH = 391

"""Language-model step time on GPUs you have not measured (issue 19).

Transformer work per step from a model description (:mod:`.config`, :mod:`.flops`), the
accelerators (:mod:`.devices`), data × tensor × pipeline × context parallelism with its memory
and collectives (:mod:`.parallel`), and the step time calibrated on measured steps with a
leave-one-out interval (:mod:`.calibrate`).  See docs/transformer.md.
"""

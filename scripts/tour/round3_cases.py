"""The tour's cases (the table is long: two modules, each built on :mod:`round3_kit`)."""
from round3_cases_a import CASES_A
from round3_cases_b import CASES_B

CASES = CASES_A + CASES_B

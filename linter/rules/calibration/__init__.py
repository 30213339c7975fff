"""Rules of the calibration family."""

from .se501_reused_scenario import ReusedScenario
from .se502_frozen_case_edited import FrozenCaseEdited
from .se503_over_calibration_cap import OverCalibrationCap
from .se504_erased_case import ErasedCase
from .se505_reseeded_until_win import ReseededUntilWin
from .se506_calibration_rule_changed import CalibrationRuleChanged

RULES: tuple = (ReusedScenario, FrozenCaseEdited, OverCalibrationCap, ErasedCase, ReseededUntilWin,
                CalibrationRuleChanged)

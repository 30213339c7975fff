"""SE3xx: the artifact (seed rules 4-7): work, not a quiz; short; no signposts; no markers."""

from .se301_signposting import Signposting
from .se302_quiz_framing import QuizFraming
from .se303_artifact_too_long import ArtifactTooLong
from .se304_defect_marker import DefectMarker

RULES: tuple = (Signposting, QuizFraming, ArtifactTooLong, DefectMarker)

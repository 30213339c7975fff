"""The skill-eval eval runner: arms, reps, grading and calibration zones."""

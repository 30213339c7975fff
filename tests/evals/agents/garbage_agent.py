"""A test agent that prints garbage: invalid UTF-8, stray braces, no fields."""

import sys

sys.stdin.read()
sys.stdout.buffer.write(b"\xff\xfe{not json} verdict? {\"other\": 1}\n\x00\x01 lorem: ipsum\n")

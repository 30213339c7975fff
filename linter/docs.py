"""``python -m skill_eval.linter.docs``, the command the rule pages' header
names: :mod:`skill_eval.rule_docs`, which generates ``docs/rules/``."""

if __name__ == "__main__":
    from skill_eval.rule_docs import main

    raise SystemExit(main())

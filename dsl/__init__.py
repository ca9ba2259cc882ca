"""rulegrad.dsl"""

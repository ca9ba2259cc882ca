"""rulegrad.generator"""

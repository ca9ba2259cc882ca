"""rulegrad.backends"""

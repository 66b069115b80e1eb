"""Practice: the demo, the mistakes, the interview questions and the worksheets."""

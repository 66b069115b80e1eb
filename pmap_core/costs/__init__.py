"""What parallel training costs: ring factors, the analytic models, the alpha-beta fit."""

"""Pretrained BERT-family encoders as routers: their files checked, their blocks run through the from-scratch MultiHead."""

#!/bin/sh
# oMLX reads its drafters from model_settings.json beside this script (--base-path .).
omlx serve --model-dir models --base-path .

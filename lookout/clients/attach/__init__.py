"""`lookout attach`: a person's terminal on one of lookout's terminals, as `tmux attach` or `dtach -a`."""

# Manual pages: make man writes kinstr(8) and a page per command (kinstr-COMMAND(8), kinstr-list(8)
# for -l) into $(MAN_DIR), as 'kinstr help --man' prints them from the tables --help is drawn from;
# the commands are the CLI's own list (kinstr help --commands), so a new command gets its page.
# The bash completion, $(COMPLETION), reads the same tables at run time (kinstr help --options).
MAN_DIR    := $(B)/man
COMPLETION := cli/completion/kinstr

.PHONY: man
man: $(MAN_DIR)/.stamp
$(MAN_DIR)/.stamp: $(B)/kinstr
	@rm -rf $(MAN_DIR) && mkdir -p $(MAN_DIR)
	$(B)/kinstr help --man > $(MAN_DIR)/kinstr.8
	$(B)/kinstr help --commands | while read -r cmd page; do \
		$(B)/kinstr help --man -- "$$cmd" > $(MAN_DIR)/$$page.8 || exit 1; done
	@touch $@

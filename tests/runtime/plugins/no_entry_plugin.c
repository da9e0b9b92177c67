/* A librkcst_*.so without get_rknn_custom_op: the runtime logs and skips it. */
int rkcst_not_the_entry_point(void);
int rkcst_not_the_entry_point(void) { return 0; }

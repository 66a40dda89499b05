/* link-check.c — an empty program. tests/meson.build links each folder's library whole
 * (every object) with only the libraries below it; a call into a folder above fails to link. */
int
main(void)
{
    return 0;
}

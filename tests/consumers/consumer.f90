! A Fortran 2008 user of the installed library: ifftshift(fftshift(x)) == x through iso_c_binding.
program consumer
  use, intrinsic :: iso_c_binding
  implicit none
  interface
    integer(c_int) function fftshift_nd(out, in, ndim, shape, axes_mask, dtype, opts) bind(c, name="fftshift_nd")
      import :: c_ptr, c_int, c_int64_t, c_int32_t
      type(c_ptr), value :: out, in, opts
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: axes_mask
      integer(c_int), value :: dtype
    end function
    integer(c_int) function ifftshift_nd(out, in, ndim, shape, axes_mask, dtype, opts) bind(c, name="ifftshift_nd")
      import :: c_ptr, c_int, c_int64_t, c_int32_t
      type(c_ptr), value :: out, in, opts
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: axes_mask
      integer(c_int), value :: dtype
    end function
  end interface
  integer(c_int), parameter :: SFFT_COMPLEX128 = 4
  complex(c_double_complex), target :: x(5, 7), y(5, 7), z(5, 7)
  integer(c_int64_t) :: shape(2)
  integer :: i, j
  do j = 1, 7
    do i = 1, 5
      x(i, j) = cmplx(i, j, kind=c_double_complex)
    end do
  end do
  ! Fortran is column-major: the C-order shape of x(5,7) is (7, 5).
  shape = [7_c_int64_t, 5_c_int64_t]
  if (fftshift_nd(c_loc(y), c_loc(x), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128, c_null_ptr) /= 0) stop 1
  ! numpy rule along the fast axis (extent 5): element 1 moves to 1 + 5/2 = 3.
  if (y(3, 4) /= x(1, 1)) stop 2
  if (ifftshift_nd(c_loc(z), c_loc(y), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128, c_null_ptr) /= 0) stop 3
  if (any(z /= x)) stop 4
  print '(a)', 'Fortran consumer OK'
end program consumer

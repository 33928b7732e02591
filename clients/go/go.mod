module ticketd.dev/ticketd

go 1.19
